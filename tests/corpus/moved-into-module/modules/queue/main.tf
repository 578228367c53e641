resource "null_resource" "this" {}
