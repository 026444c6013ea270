// Package chat formats conversations for instruct models with their own
// chat templates (Jinja, as transformers' apply_chat_template renders
// them), and for base models with Plain.
//
// The engine follows Hugging Face's JavaScript Jinja, @huggingface/jinja
// 0.5.11, construct by construct, and refuses (ErrUnsupported) where that
// engine and Python's Jinja, which transformers uses, would render
// differently.
package chat
