terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

module "database" {
  source = "./modules/db"
}

resource "null_resource" "app" {
  depends_on = [module.database]
}

output "db_name" {
  value = module.database.name
}
