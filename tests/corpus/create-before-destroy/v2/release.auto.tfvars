version_tag = "v2"
