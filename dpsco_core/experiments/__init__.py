"""Paper reproductions (``python -m dpsco_core reproduce ...``)."""
