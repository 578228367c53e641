terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

locals {
  raw_yaml = <<-YAML
    service:
      name: web
      ports: [80, 443]
      enabled: true
    owners:
      - alice
      - bob
  YAML

  decoded  = yamldecode(local.raw_yaml)
  as_json  = jsonencode(local.decoded)
  back     = jsondecode(local.as_json)
  port     = try(local.decoded.service.ports[0], 0)
  missing  = try(local.decoded.service.missing, "default")
  has_name = can(local.decoded.service.name)
  bad_num  = can(tonumber("abc"))
}

resource "null_resource" "service" {
  triggers = {
    json = local.as_json
  }
}

output "decoded" {
  value = local.decoded
}

output "json" {
  value = local.as_json
}

output "checks" {
  value = [local.port, local.missing, local.has_name, local.bad_num]
}

output "yaml" {
  value = yamlencode({ a = [1, 2], b = "x" })
}
