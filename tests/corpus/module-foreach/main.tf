terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "environments" {
  type = map(object({
    replicas = number
  }))
  default = {
    dev  = { replicas = 1 }
    prod = { replicas = 2 }
  }
}

module "env" {
  source   = "./modules/env"
  for_each = var.environments

  name     = each.key
  replicas = each.value.replicas
}

output "instances" {
  value = { for k, m in module.env : k => m.instance_names }
}
