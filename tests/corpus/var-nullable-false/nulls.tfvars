name    = null
comment = null
