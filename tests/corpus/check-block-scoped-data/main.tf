terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

resource "null_resource" "app" {}

check "app_reachable" {
  data "null_data_source" "probe" {
    inputs = {
      target = null_resource.app.id
    }
  }

  assert {
    condition     = data.null_data_source.probe.outputs["target"] != ""
    error_message = "The probe saw no target."
  }
}
