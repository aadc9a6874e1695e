"""Zone control: what the zones show (aggregation up the tree) and what they are told (zone orders)."""
