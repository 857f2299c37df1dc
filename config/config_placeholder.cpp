// Placeholder until config/ has its loader.
