terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

module "label" {
  source = "./modules/label"

  namespace = "acme"
  stage     = "prod"
  name      = "api"
}

output "id" {
  value = module.label.id
}

output "tags" {
  value = module.label.tags
}
