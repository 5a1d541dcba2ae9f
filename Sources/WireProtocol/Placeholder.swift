// Placeholder: replaced by the module's code.
