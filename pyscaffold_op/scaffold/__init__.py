"""The scaffolding engine: naming rules, the PROJECT file, rendering and atomic file transactions."""
