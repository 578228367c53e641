terraform {
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

resource "null_resource" "kept" {}

removed {
  from = null_resource.legacy

  lifecycle {
    destroy = false
  }
}
