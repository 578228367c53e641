terraform {
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

resource "null_resource" "web" {
  triggers = {
    role = "web"
  }
}

moved {
  from = null_resource.old_name
  to   = null_resource.web
}

output "web_id" {
  value = null_resource.web.id
}
