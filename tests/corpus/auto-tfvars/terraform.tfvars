name = "from-terraform-tfvars"
size = "medium"
