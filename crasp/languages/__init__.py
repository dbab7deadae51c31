"""Language library for crasp (see issue 4)."""
