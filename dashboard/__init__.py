"""The Dash dashboard, table-side screens, operator entry and HTTP API (``roads serve``)."""
