terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

resource "null_resource" "first" {}

resource "null_resource" "checked" {
  depends_on = [null_resource.first]

  lifecycle {
    postcondition {
      condition     = self.id == "never"
      error_message = "The id was not the one expected."
    }
  }
}
