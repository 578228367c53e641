terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

resource "null_resource" "first" {
  triggers = {
    stage = "one"
  }
}

data "null_data_source" "after" {
  inputs = {
    upstream = null_resource.first.id
  }
}

output "upstream_matches" {
  value = data.null_data_source.after.outputs["upstream"] == null_resource.first.id
}
