# axond: filled in by its owner
