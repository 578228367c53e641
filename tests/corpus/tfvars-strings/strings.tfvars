motd = <<-EOT
  Welcome to the host.
    Indented line.
  EOT

quoted  = "say \"hi\"\tthen\nleave \\ done"
unicode = "caf\u00e9 \U0001F600"
