terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

module "region" {
  source = "./modules/region"
  count  = 2

  index = count.index
  zones = ["a", "b"]
}

output "zones" {
  value = flatten(module.region[*].zones)
}
