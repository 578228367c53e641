tags = {
  owner       = "team-a"
  environment = "test"
  "cost:center" = "42"
}

sizes = {
  small = 1
  large = 4
}
