terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

resource "null_resource" "site" {
  triggers = {
    status = "degraded"
  }
}

check "site_health" {
  assert {
    condition     = null_resource.site.triggers.status == "healthy"
    error_message = "The site reports ${null_resource.site.triggers.status}."
  }
}

output "status" {
  value = null_resource.site.triggers.status
}
