"""Dashboard widgets: equipment and zone tiles in the order the home's dashboard shows them."""
