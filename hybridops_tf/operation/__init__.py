"""One apply/destroy/refresh/import/init of one module, the contract step by step: request, inputs, run, settle."""
