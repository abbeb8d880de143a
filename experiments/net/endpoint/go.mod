module netstudyendpoint

go 1.24
