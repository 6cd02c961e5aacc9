"""The independent judge: what it is shown (quoted agent text), its prompt and structured answer, its cost.
It runs only after every deterministic check passed and can only add failures.
"""
