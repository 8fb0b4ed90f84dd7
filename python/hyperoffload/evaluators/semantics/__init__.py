"""
The semantics of the ops both evaluators run, written once over an
`ArrayBackend` (numpy for the numeric evaluator, torch for the executor).
"""
