note = "second"
