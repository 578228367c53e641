size     = "large"
replicas = 2
