terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

resource "null_resource" "tolerant" {
  provisioner "local-exec" {
    command    = "exit 1"
    on_failure = continue
  }

  provisioner "local-exec" {
    when       = destroy
    command    = "exit 1"
    on_failure = continue
  }
}
