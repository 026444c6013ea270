module github.com/hlmproject/hlm

go 1.24
