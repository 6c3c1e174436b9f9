# vnfs/http: the HTTP message head collector (http_head.h) the ids and waf
# engines share.  Not a library of its own: its object goes into both
# engine libraries (a program linking both takes it once), so that every
# user of $(IDS_LIB) or $(WAF_LIB) links as before.  Included by
# vnfs/ids/module.mk and vnfs/waf/module.mk (the top Makefile lists only
# folders that build something of their own).
ifndef HTTP_HEAD_SRCS
HTTP_HEAD_SRCS := vnfs/http/http_head.c
HTTP_HEAD_CPPFLAGS := -Ivnfs/http
endif
