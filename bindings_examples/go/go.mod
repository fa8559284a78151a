module github.com/libmrt/mrt-go

go 1.19
