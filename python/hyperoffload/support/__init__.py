"""Support code every layer may use: byte sizes, atomic outputs, array helpers."""
