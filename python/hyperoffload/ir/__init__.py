"""The IR layer: parsing (with the upstream bridge), one `make_context()`, located diagnostics."""
