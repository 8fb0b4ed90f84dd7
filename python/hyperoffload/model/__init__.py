"""
The ground data model every layer builds on: schedules, the hardware model
(its presets and the one roofline, `Hardware.kernel_s`), moves (schedule
edits), the pricing of compressed transfers, memory layouts, and the decode
steps, routing profiles and MoE steps that the generation and expert
simulations run (as data; the policies that run them are in
`hyperoffload.policies`).
"""
