"""The schedule data model, the hardware model and the discrete-event simulator with its peer policies."""
