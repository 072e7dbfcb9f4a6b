# common: filled in by its owner
