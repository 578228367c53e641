terraform {
  required_version = ">= 1.0"
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 2.1"
    }
  }
}

resource "null_resource" "anchor" {}

output "a_string" {
  value = "text with \"quotes\" and ünïcode"
}

output "a_number" {
  value = 12345678901
}

output "a_fraction" {
  value = 0.125
}

output "a_bool" {
  value = false
}

output "a_list" {
  value = ["x", "y"]
}

output "a_set" {
  value = toset(["b", "a"])
}

output "a_tuple" {
  value = ["one", 2, true]
}

output "a_map" {
  value = tomap({ a = 1, b = 2 })
}

output "an_object" {
  value = { name = "x", nested = { list = [1, 2], empty = {} } }
}

output "an_empty_list" {
  value = []
}

output "a_null" {
  value = null
}

output "an_id" {
  value = null_resource.anchor.id
}
