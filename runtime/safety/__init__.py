"""What keeps hostile text and secret values in their place: redaction and prompt framing."""
