package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ErrNoTemplate: the model has no chat template (use Plain).
var ErrNoTemplate = errors.New("chat: no chat template")

// Config is what a Hugging Face model directory says about chat: its
// templates by name and its special tokens.
type Config struct {
	// Templates holds the chat templates by name; a lone template is
	// named "default".
	Templates          map[string]string
	BOSToken, EOSToken string
}

// ParseConfig reads a tokenizer_config.json: chat_template is a string or
// a list of {"name", "template"} objects; bos_token and eos_token are
// strings or AddedToken objects ({"content": …}).
func ParseConfig(tokenizerConfig []byte) (*Config, error) {
	var raw struct {
		ChatTemplate json.RawMessage `json:"chat_template"`
		BOS          json.RawMessage `json:"bos_token"`
		EOS          json.RawMessage `json:"eos_token"`
	}
	if err := json.Unmarshal(tokenizerConfig, &raw); err != nil {
		return nil, fmt.Errorf("chat: tokenizer_config.json: %w", err)
	}
	c := &Config{Templates: map[string]string{}}
	var err error
	if c.BOSToken, err = tokenText(raw.BOS); err != nil {
		return nil, fmt.Errorf("chat: bos_token: %w", err)
	}
	if c.EOSToken, err = tokenText(raw.EOS); err != nil {
		return nil, fmt.Errorf("chat: eos_token: %w", err)
	}
	if len(raw.ChatTemplate) == 0 || string(raw.ChatTemplate) == "null" {
		return c, nil
	}
	var one string
	if json.Unmarshal(raw.ChatTemplate, &one) == nil {
		c.Templates["default"] = one
		return c, nil
	}
	var named []struct {
		Name     *string `json:"name"`
		Template *string `json:"template"`
	}
	if err := json.Unmarshal(raw.ChatTemplate, &named); err != nil {
		return nil, fmt.Errorf("chat: chat_template must be a string or a list of {name, template}")
	}
	for _, n := range named {
		if n.Name == nil || n.Template == nil {
			return nil, fmt.Errorf("chat: chat_template must be a list of objects with \"name\" and \"template\"")
		}
		c.Templates[*n.Name] = *n.Template
	}
	return c, nil
}

func tokenText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var added struct {
		Content *string `json:"content"`
	}
	if err := json.Unmarshal(raw, &added); err != nil || added.Content == nil {
		return "", fmt.Errorf("a token must be a string or an object with content")
	}
	return *added.Content, nil
}

// Template is the template named name ("" means "default"), as
// transformers picks it.
func (c *Config) Template(name string) (string, error) {
	if name == "" {
		name = "default"
	}
	src, ok := c.Templates[name]
	if !ok {
		if name == "default" && len(c.Templates) == 0 {
			return "", ErrNoTemplate
		}
		names := make([]string, 0, len(c.Templates))
		for n := range c.Templates {
			names = append(names, n)
		}
		sort.Strings(names)
		return "", fmt.Errorf("%w named %q (there are: %s)", ErrNoTemplate, name, strings.Join(names, ", "))
	}
	return src, nil
}

// LoadDir reads the chat configuration of a Hugging Face model directory:
// tokenizer_config.json, whose templates chat_template.json's
// "chat_template", then chat_template.jinja replace as the default, and
// additional_chat_templates/NAME.jinja add to. A directory without a
// template gives a Config without Templates (Template returns
// ErrNoTemplate).
func LoadDir(dir string) (*Config, error) {
	c := &Config{Templates: map[string]string{}}
	data, err := os.ReadFile(filepath.Join(dir, "tokenizer_config.json"))
	switch {
	case err == nil:
		if c, err = ParseConfig(data); err != nil {
			return nil, err
		}
	case !errors.Is(err, os.ErrNotExist):
		return nil, err
	}
	if data, err := os.ReadFile(filepath.Join(dir, "chat_template.json")); err == nil {
		var ct struct {
			ChatTemplate string `json:"chat_template"`
		}
		if err := json.Unmarshal(data, &ct); err != nil {
			return nil, fmt.Errorf("chat: chat_template.json: %w", err)
		}
		if ct.ChatTemplate != "" {
			c.Templates["default"] = ct.ChatTemplate
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if data, err := os.ReadFile(filepath.Join(dir, "chat_template.jinja")); err == nil {
		c.Templates["default"] = string(data)
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	extra, _ := filepath.Glob(filepath.Join(dir, "additional_chat_templates", "*.jinja"))
	for _, f := range extra {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		c.Templates[strings.TrimSuffix(filepath.Base(f), ".jinja")] = string(data)
	}
	return c, nil
}
