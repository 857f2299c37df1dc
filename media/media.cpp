// Placeholder until media/ has its first module.
