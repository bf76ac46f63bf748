"""Fault injection: every fault on the wire, with the official SDK client, and the rules that place them."""
