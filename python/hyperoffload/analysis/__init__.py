"""From IR to the program graph: cost model, kernel fusion, extraction, lifetimes, bounds."""
