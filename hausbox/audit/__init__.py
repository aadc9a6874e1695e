"""The audit trail: who changed what, from where, and how it ended (mutating requests, sign-ins)."""
