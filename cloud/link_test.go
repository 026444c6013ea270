package cloud

import "github.com/hlmproject/hlm/channel"

func newLink(c channel.Config) (channel.Link, error) { return channel.New(c) }
