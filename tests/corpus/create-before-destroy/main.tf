terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

variable "version_tag" {
  type    = string
  default = "v1"
}

resource "null_resource" "release" {
  triggers = {
    version = var.version_tag
  }

  lifecycle {
    create_before_destroy = true
  }
}

output "version" {
  value = null_resource.release.triggers.version
}
