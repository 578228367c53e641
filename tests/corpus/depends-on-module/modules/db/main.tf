data "null_data_source" "name" {
  inputs = {
    name = "orders"
  }
}

resource "null_resource" "db" {
  triggers = {
    name = data.null_data_source.name.outputs["name"]
  }
}

output "name" {
  value = null_resource.db.triggers.name
}
