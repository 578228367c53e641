network = {
  cidr    = "10.8.0.0/16"
  subnets = ["10.8.1.0/24"]
}
