# vnfs/http: the HTTP message head collector (http_head.h) the ids and waf
# engines share.  Not a library of its own: its object goes into both
# engine libraries (a program linking both takes it once), so that every
# user of $(IDS_LIB) or $(WAF_LIB) links as before.  Listed in MODULES
# before the kinds that use it.
HTTP_HEAD_SRCS := vnfs/http/http_head.c
HTTP_HEAD_CPPFLAGS := -Ivnfs/http
