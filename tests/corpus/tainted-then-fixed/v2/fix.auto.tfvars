exit_code = 0
