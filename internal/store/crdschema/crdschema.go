/*
Copyright 2026 The tether authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package crdschema prunes, defaults and validates custom resources against
// their CustomResourceDefinitions the way kube-apiserver does, so that the
// local file store accepts and rejects exactly what a cluster would.
//
// It does not implement any schema logic itself: it wires together the
// packages kube-apiserver uses for custom resources (structural schemas,
// pruning, defaulting, OpenAPI validation with ratcheting, CEL
// x-kubernetes-validations, list-type checks and ObjectMeta validation), in
// the order of k8s.io/apiextensions-apiserver/pkg/registry/customresource
// (strategy.go, status_strategy.go, validator.go),
// pkg/apiserver/customresource_handler.go and
// k8s.io/apiserver/pkg/registry/rest (BeforeCreate, BeforeUpdate).
//
// A store calls, for a write: Prune, then Default (the request decode), then
// the strategy's preparation (status reset, generation, system metadata;
// the store's business), then ValidateCreate, ValidateUpdate or
// ValidateStatusUpdate, and ToAPIError on a non-empty result.
package crdschema

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/api/validate/content"
	genericvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// Validator validates and defaults custom resources against their CRDs.
// It is safe for concurrent use; its methods only mutate the objects passed
// to Prune and Default.
type Validator struct {
	// versions compile each served version on first use: a process that
	// writes one kind (a CLI verb, an agent hook) compiles only its schema.
	versions map[schema.GroupVersionKind]func() (*version, error)
}

// version holds what kube-apiserver builds once per served CRD version.
type version struct {
	gvk        schema.GroupVersionKind
	namespaced bool
	structural *structuralschema.Structural
	// schemaValidator validates the whole object, statusValidator only
	// .status (nil without a status subresource or status schema).
	schemaValidator apiservervalidation.SchemaValidator
	statusValidator apiservervalidation.SchemaValidator
	// statusProperties validates each property of .status alone; nil when
	// the status schema checks more of the status object than its
	// properties (see propertiesOnly), so that it must be validated whole.
	statusProperties map[string]apiservervalidation.SchemaValidator
	hasStatus        bool
	// cel compiles the x-kubernetes-validations on first use, so that
	// processes that only read (tether get) never pay for compiling them;
	// it returns nil when the schema has none.
	cel func() *cel.Validator
	// ruleRoots are the top-level fields whose subtrees hold
	// x-kubernetes-validations; rootRules is set when the root holds some.
	ruleRoots []string
	rootRules bool
	// celCompiled is set once cel has compiled the rules.
	celCompiled atomic.Bool
	// embedsResources is set when some node of the schema is an
	// x-kubernetes-embedded-resource: only then does coercion below the
	// root change anything.
	embedsResources bool
}

// New registers every served version of crds. Each version's structural
// schema, defaulter and validators are built once, on its first use, from
// crds, which the caller must not change afterwards. The CRDs are expected
// to have passed the API server's CRD validation (config/crd tests that);
// New fails on what it cannot serve, and a schema that does not compile
// fails every write of its kind with an internal error.
func New(crds []*apiextensionsv1.CustomResourceDefinition) (*Validator, error) {
	v := &Validator{versions: map[schema.GroupVersionKind]func() (*version, error){}}
	for _, crd := range crds {
		if crd.Spec.PreserveUnknownFields {
			return nil, fmt.Errorf("CRD %s: spec.preserveUnknownFields is not supported", crd.Name)
		}
		for i := range crd.Spec.Versions {
			cv := &crd.Spec.Versions[i]
			if !cv.Served {
				continue
			}
			gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: cv.Name, Kind: crd.Spec.Names.Kind}
			if _, dup := v.versions[gvk]; dup {
				return nil, fmt.Errorf("CRD %s: %s is served by more than one CRD", crd.Name, gvk)
			}
			if cv.Schema == nil || cv.Schema.OpenAPIV3Schema == nil {
				return nil, fmt.Errorf("CRD %s version %s: no schema", crd.Name, cv.Name)
			}
			if cv.Subresources != nil && cv.Subresources.Scale != nil {
				return nil, fmt.Errorf("CRD %s version %s: the scale subresource is not supported", crd.Name, cv.Name)
			}
			name, namespaced := crd.Name, crd.Spec.Scope == apiextensionsv1.NamespaceScoped
			v.versions[gvk] = sync.OnceValues(func() (*version, error) {
				ver, err := newVersion(gvk, namespaced, cv)
				if err != nil {
					return nil, fmt.Errorf("CRD %s version %s: %w", name, cv.Name, err)
				}
				return ver, nil
			})
		}
	}
	return v, nil
}

// newVersion mirrors the per-version setup of crdHandler.getOrCreateServingInfoFor.
func newVersion(gvk schema.GroupVersionKind, namespaced bool, cv *apiextensionsv1.CustomResourceDefinitionVersion) (*version, error) {
	internal := &apiextensions.CustomResourceValidation{}
	if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(cv.Schema, internal, nil); err != nil {
		return nil, fmt.Errorf("converting the schema to the internal version: %w", err)
	}
	s, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
	if err != nil {
		return nil, fmt.Errorf("the schema is not structural: %w", err)
	}
	// As the handler does: copy, since defaults are shared, then drop the
	// unknown fields from defaults so that defaulting never adds them.
	s = s.DeepCopy()
	if err := structuraldefaulting.PruneDefaults(s); err != nil {
		return nil, fmt.Errorf("pruning defaults: %w", err)
	}
	ver := &version{
		gvk:        gvk,
		namespaced: namespaced,
		structural: s,
		hasStatus:  cv.Subresources != nil && cv.Subresources.Status != nil,
	}
	ver.cel = sync.OnceValue(func() *cel.Validator {
		ver.celCompiled.Store(true)
		return cel.NewValidator(s, true, celconfig.PerCallLimit)
	})
	ver.rootRules = len(s.XValidations) > 0
	ver.embedsResources = embedsResources(s)
	for name, p := range s.Properties {
		if hasRules(&p) {
			ver.ruleRoots = append(ver.ruleRoots, name)
		}
	}
	if ver.schemaValidator, _, err = apiservervalidation.NewSchemaValidator(internal.OpenAPIV3Schema); err != nil {
		return nil, err
	}
	if ver.hasStatus {
		if statusSchema, ok := internal.OpenAPIV3Schema.Properties["status"]; ok {
			if ver.statusValidator, _, err = apiservervalidation.NewSchemaValidator(&statusSchema); err != nil {
				return nil, err
			}
			if propertiesOnly(&statusSchema) {
				ver.statusProperties = map[string]apiservervalidation.SchemaValidator{}
				for name, prop := range statusSchema.Properties {
					if ver.statusProperties[name], _, err = apiservervalidation.NewSchemaValidator(&prop); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	return ver, nil
}

// compiled returns gvk's compiled version; ok is false when no CRD serves gvk.
func (v *Validator) compiled(gvk schema.GroupVersionKind) (ver *version, ok bool, err error) {
	build, ok := v.versions[gvk]
	if !ok {
		return nil, false, nil
	}
	ver, err = build()
	return ver, true, err
}

// Has reports whether gvk is served by one of the CRDs.
func (v *Validator) Has(gvk schema.GroupVersionKind) bool {
	_, ok := v.versions[gvk]
	return ok
}

// Default applies the schema defaults to obj in place (as the API server does on decode of a request body and on read from storage).
func (v *Validator) Default(gvk schema.GroupVersionKind, obj map[string]interface{}) error {
	ver, ok, err := v.compiled(gvk)
	if !ok {
		return fmt.Errorf("no CRD serves %s", gvk)
	}
	if err != nil {
		return err
	}
	structuraldefaulting.Default(obj, ver.structural)
	return nil
}

// Prune removes fields not in the schema from obj (metadata, apiVersion, kind preserved as the API server does) and returns the JSON paths of the removed fields, e.g. "spec.foo", "spec.steps[0].bar". A store in strict mode rejects when this is non-empty.
//
// Like the API server's decoder it also drops unknown metadata fields
// (reported as "metadata.foo"), normalises metadata through ObjectMeta,
// removes nulls from non-nullable fields without a default, and prunes inside
// embedded resources. It does nothing for a gvk that no CRD serves.
//
// Where the API server would fail to decode (metadata or an embedded
// resource of the wrong shape), Prune leaves that part as it is; the
// Validate methods then report it as Invalid.
func (v *Validator) Prune(gvk schema.GroupVersionKind, obj map[string]interface{}) []string {
	ver, ok, err := v.compiled(gvk)
	if !ok || err != nil {
		return nil // the Validate methods report the error
	}
	// unstructuredSchemaCoercer.apply with returnUnknownFieldPaths, as for a
	// request body; apiVersion and kind are skipped by pruning at the root.
	objectMeta, foundMeta, unknown, err := schemaobjectmeta.GetObjectMetaWithOptions(obj, schemaobjectmeta.ObjectMetaOptions{
		ReturnUnknownFieldPaths: true,
	})
	if err != nil {
		foundMeta, unknown = false, nil
	}
	unknown = append(unknown, structuralpruning.PruneWithOptions(obj, ver.structural, true, structuralschema.UnknownFieldPathOptions{
		TrackUnknownFieldPaths: true,
	})...)
	// Both passes walk the whole object and allocate at every field (a
	// copy of its schema node, a path), for a status write more than the
	// pruning itself; each is skipped where it could change nothing: with
	// no null in the object, and with no embedded resource in the schema.
	if hasNull(obj) {
		structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, ver.structural)
	}
	if ver.embedsResources {
		if ferr, paths := schemaobjectmeta.CoerceWithOptions(nil, obj, ver.structural, false, schemaobjectmeta.CoerceOptions{
			ReturnUnknownFieldPaths: true,
		}); ferr == nil {
			unknown = append(unknown, paths...)
		}
	}
	if foundMeta {
		// ObjectMeta always converts; on the impossible error the original stays.
		_ = schemaobjectmeta.SetObjectMeta(obj, objectMeta)
	}
	return unknown
}

// ValidateCreate validates a new object (already defaulted): OpenAPI schema (types, enums, patterns, min/max, required, maxItems, ...), CEL x-kubernetes-validations, and ObjectMeta (name must be a DNS-1123 subdomain, namespace a DNS-1123 label, labels/annotations valid, total annotations size, etc.).
//
// It is rest.ValidateCreate with the custom resource strategy.
func (v *Validator) ValidateCreate(ctx context.Context, gvk schema.GroupVersionKind, obj map[string]interface{}) field.ErrorList {
	ver, ok, err := v.compiled(gvk)
	if !ok {
		return notServed(gvk)
	}
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	u := &unstructured.Unstructured{Object: obj}

	// customResourceStrategy.Validate
	var errs field.ErrorList
	errs = append(errs, ver.validateResource(ctx, u)...)
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, u.Object, ver.structural, false)...)
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, ver.structural, u.Object)...)
	errs = append(errs, ver.validateCEL(ctx, errs, u.Object, nil)...)

	// rest.ValidateCreate: the common ObjectMeta checks run only when the
	// strategy found nothing, so that its more specific messages win.
	if len(errs) == 0 {
		errs = append(errs, genericvalidation.ValidateObjectMetaAccessor(u, ver.namespaced, validatePathSegment, field.NewPath("metadata"))...)
	}
	return errs
}

// ValidateUpdate validates obj against old, including CEL transition rules that use oldSelf (e.g. the Checkpoint rule `self == oldSelf` on spec), and ObjectMeta update rules (immutable name/namespace/uid/creationTimestamp).
//
// It is rest.ValidateUpdate with the custom resource strategy, with
// validation ratcheting (the CRDValidationRatcheting feature is GA and
// locked on): errors in values unchanged from old are not reported.
func (v *Validator) ValidateUpdate(ctx context.Context, gvk schema.GroupVersionKind, obj, old map[string]interface{}) field.ErrorList {
	ver, ok, err := v.compiled(gvk)
	if !ok {
		return notServed(gvk)
	}
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	uNew := &unstructured.Unstructured{Object: obj}
	uOld := &unstructured.Unstructured{Object: old}

	errs := ver.validateCommonFields(uNew, uOld)

	// customResourceStrategy.ValidateUpdate
	correlated := common.NewCorrelatedObject(uNew.Object, uOld.Object, &model.Structural{Structural: ver.structural})
	var strategyErrs field.ErrorList
	strategyErrs = append(strategyErrs, ver.validateResourceUpdate(ctx, uNew, uOld, apiservervalidation.WithRatcheting(correlated))...)
	strategyErrs = append(strategyErrs, schemaobjectmeta.Validate(ctx, nil, uNew.Object, ver.structural, false)...)
	if oldErrs := structurallisttype.ValidateListSetsAndMaps(nil, ver.structural, uOld.Object); len(oldErrs) == 0 {
		strategyErrs = append(strategyErrs, structurallisttype.ValidateListSetsAndMaps(nil, ver.structural, uNew.Object)...)
	}
	strategyErrs = append(strategyErrs, ver.validateCEL(ctx, strategyErrs, uNew.Object, uOld.Object, cel.WithRatcheting(correlated))...)

	return append(errs, strategyErrs...)
}

// ValidateStatusUpdate validates a status-subresource update the way the API server's status strategy does (schema of status, CEL rules applicable, and metadata).
//
// obj must already be what the status strategy's PrepareForUpdate makes of
// the request: old with only .status (and managedFields) taken from the
// request. Only .status is checked against the OpenAPI schema, with
// ratcheting; CEL rules run on the whole object with ratcheting, so rules
// on unchanged parts such as spec pass.
func (v *Validator) ValidateStatusUpdate(ctx context.Context, gvk schema.GroupVersionKind, obj, old map[string]interface{}) field.ErrorList {
	return v.validateStatusUpdate(ctx, gvk, obj, old, false)
}

// ValidateStatus checks status alone against gvk's status schema, without
// an old object, as ValidateStatusUpdate checks an update's status when
// nothing is ratcheted. It needs no stored object, so a store can run it
// before it takes its write lock.
func (v *Validator) ValidateStatus(gvk schema.GroupVersionKind, status interface{}) field.ErrorList {
	ver, ok, err := v.compiled(gvk)
	if !ok {
		return notServed(gvk)
	}
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	if !ver.hasStatus {
		return field.ErrorList{field.InternalError(field.NewPath("status"), fmt.Errorf("%s has no status subresource", gvk))}
	}
	return apiservervalidation.ValidateCustomResource(field.NewPath("status"), status, ver.statusValidator)
}

// StatusValidBeside tells whether status passes gvk's status schema in
// what it changes from old, the status it replaces: each of its
// properties whose value differs from old's is validated alone, and the
// others are not, as ratcheting forgives an unchanged value's errors. It
// validates status whole, as ValidateStatus, when old is not a status
// object or the status schema checks the object beyond its properties.
// Like ValidateStatus it needs no lock, only the status read before it.
func (v *Validator) StatusValidBeside(gvk schema.GroupVersionKind, status, old interface{}) bool {
	ver, ok, err := v.compiled(gvk)
	if !ok || err != nil || !ver.hasStatus {
		return false
	}
	now, isMap := status.(map[string]interface{})
	before, wasMap := old.(map[string]interface{})
	if ver.statusProperties == nil || !isMap || !wasMap {
		return len(v.ValidateStatus(gvk, status)) == 0
	}
	for name, value := range now {
		if prev, kept := before[name]; kept && equality.Semantic.DeepEqual(prev, value) {
			continue
		}
		pv, known := ver.statusProperties[name]
		if !known {
			return len(v.ValidateStatus(gvk, status)) == 0
		}
		if len(apiservervalidation.ValidateCustomResource(field.NewPath("status", name), value, pv)) > 0 {
			return false
		}
	}
	return true
}

// propertiesOnly tells whether schema, an object's, checks nothing of the
// object itself but its properties one by one: no required property, no
// count, no additional or pattern properties, no combinator, no enum. CEL
// rules (x-kubernetes-validations) are not the OpenAPI validator's; the
// store runs them on the whole object under its lock.
func propertiesOnly(schema *apiextensions.JSONSchemaProps) bool {
	rest := *schema
	rest.Properties, rest.Description, rest.XValidations = nil, "", nil
	if rest.Type != "object" {
		return false
	}
	rest.Type = ""
	return reflect.DeepEqual(rest, apiextensions.JSONSchemaProps{})
}

// ValidateCheckedStatusUpdate is ValidateStatusUpdate for an obj whose
// status ValidateStatus found valid: it leaves out the status schema, which
// would find it valid again (ratcheting only ever forgives errors), and
// checks the rest (metadata, list types, CEL rules) as ValidateStatusUpdate
// does.
func (v *Validator) ValidateCheckedStatusUpdate(ctx context.Context, gvk schema.GroupVersionKind, obj, old map[string]interface{}) field.ErrorList {
	return v.validateStatusUpdate(ctx, gvk, obj, old, true)
}

func (v *Validator) validateStatusUpdate(ctx context.Context, gvk schema.GroupVersionKind, obj, old map[string]interface{}, statusChecked bool) field.ErrorList {
	ver, ok, err := v.compiled(gvk)
	if !ok {
		return notServed(gvk)
	}
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	if !ver.hasStatus {
		return field.ErrorList{field.InternalError(field.NewPath("status"), fmt.Errorf("%s has no status subresource", gvk))}
	}
	uNew := &unstructured.Unstructured{Object: obj}
	uOld := &unstructured.Unstructured{Object: old}

	errs := ver.validateCommonFields(uNew, uOld)

	// statusStrategy.ValidateUpdate
	correlated := common.NewCorrelatedObject(uNew.Object, uOld.Object, &model.Structural{Structural: ver.structural})
	var strategyErrs field.ErrorList
	if statusChecked {
		strategyErrs = append(strategyErrs, ver.validateStatusMeta(ctx, uNew, uOld)...)
	} else {
		strategyErrs = append(strategyErrs, ver.validateStatusUpdate(ctx, uNew, uOld, apiservervalidation.WithRatcheting(correlated.Key("status")))...)
	}
	if newErrs := structurallisttype.ValidateListSetsAndMaps(nil, ver.structural, uNew.Object); len(newErrs) > 0 {
		if oldErrs := structurallisttype.ValidateListSetsAndMaps(nil, ver.structural, uOld.Object); len(oldErrs) == 0 {
			strategyErrs = append(strategyErrs, newErrs...)
		}
	}
	strategyErrs = append(strategyErrs, ver.validateCEL(ctx, strategyErrs, uNew.Object, uOld.Object, cel.WithRatcheting(correlated))...)

	return append(errs, strategyErrs...)
}

// ToAPIError turns a non-empty ErrorList into the same *apierrors.StatusError kube-apiserver returns (apierrors.NewInvalid with the GroupKind and name), so reason (Invalid, 422) and field paths match.
// It returns nil for an empty list.
func ToAPIError(gvk schema.GroupVersionKind, name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(gvk.GroupKind(), name, errs)
}

func notServed(gvk schema.GroupVersionKind) field.ErrorList {
	return field.ErrorList{field.InternalError(nil, fmt.Errorf("no CRD serves %s", gvk))}
}

// validateCommonFields is rest.validateCommonFields: the generic ObjectMeta
// checks every update goes through before the strategy's own.
func (ver *version) validateCommonFields(obj, old *unstructured.Unstructured) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, genericvalidation.ValidateObjectMetaAccessor(obj, ver.namespaced, validatePathSegment, field.NewPath("metadata"))...)
	errs = append(errs, genericvalidation.ValidateObjectMetaAccessorUpdate(obj, old, field.NewPath("metadata"))...)
	return errs
}

// validateResource is customResourceValidator.Validate (without scale).
func (ver *version) validateResource(ctx context.Context, obj *unstructured.Unstructured) field.ErrorList {
	if errs := ver.validateTypeMeta(obj); len(errs) > 0 {
		return errs
	}
	var errs field.ErrorList
	errs = append(errs, ver.validateObjectMeta(ctx, operation.Create, obj, nil)...)
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, obj.UnstructuredContent(), ver.schemaValidator)...)
	return errs
}

// validateResourceUpdate is customResourceValidator.ValidateUpdate (without scale).
func (ver *version) validateResourceUpdate(ctx context.Context, obj, old *unstructured.Unstructured, opts ...apiservervalidation.ValidationOption) field.ErrorList {
	if errs := ver.validateTypeMeta(obj); len(errs) > 0 {
		return errs
	}
	var errs field.ErrorList
	errs = append(errs, ver.validateObjectMeta(ctx, operation.Update, obj, old)...)
	errs = append(errs, validateRatcheting(nil, obj.UnstructuredContent(), old.UnstructuredContent(), ver.schemaValidator, opts...)...)
	return errs
}

// validateStatusUpdate is customResourceValidator.ValidateStatusUpdate (without scale).
func (ver *version) validateStatusUpdate(ctx context.Context, obj, old *unstructured.Unstructured, opts ...apiservervalidation.ValidationOption) field.ErrorList {
	if errs := ver.validateTypeMeta(obj); len(errs) > 0 {
		return errs
	}
	var errs field.ErrorList
	errs = append(errs, ver.validateObjectMeta(ctx, operation.Update, obj, old)...)
	if status, hasStatus := obj.UnstructuredContent()["status"]; hasStatus {
		errs = append(errs, validateRatcheting(field.NewPath("status"), status, old.UnstructuredContent()["status"], ver.statusValidator, opts...)...)
	}
	return errs
}

// validateStatusMeta is validateStatusUpdate without the status schema.
func (ver *version) validateStatusMeta(ctx context.Context, obj, old *unstructured.Unstructured) field.ErrorList {
	if errs := ver.validateTypeMeta(obj); len(errs) > 0 {
		return errs
	}
	return ver.validateObjectMeta(ctx, operation.Update, obj, old)
}

// validateRatcheting is apiservervalidation.ValidateCustomResourceUpdate
// with opts (ratcheting), run only when obj has errors without them.
// Ratcheting only ever turns the errors of values unchanged from old into
// warnings, which are not reported, so a valid obj is valid with it too;
// and it builds a tree correlating old and new values, and validators for
// each, which cost a Hook's status write a tenth of its allocations.
func validateRatcheting(fldPath *field.Path, obj, old interface{}, v apiservervalidation.SchemaValidator, opts ...apiservervalidation.ValidationOption) field.ErrorList {
	if len(apiservervalidation.ValidateCustomResourceUpdate(fldPath, obj, old, v)) == 0 {
		return nil
	}
	return apiservervalidation.ValidateCustomResourceUpdate(fldPath, obj, old, v, opts...)
}

// validateTypeMeta is customResourceValidator.ValidateTypeMeta.
func (ver *version) validateTypeMeta(obj *unstructured.Unstructured) field.ErrorList {
	var errs field.ErrorList
	if kind := obj.GetKind(); kind != ver.gvk.Kind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), kind, fmt.Sprintf("must be %v", ver.gvk.Kind)))
	}
	if apiVersion, want := obj.GetAPIVersion(), ver.gvk.GroupVersion().String(); apiVersion != want {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), apiVersion, fmt.Sprintf("must be %v", want)))
	}
	return errs
}

// validateObjectMeta is customResourceValidator.validateObjectMetaDeclaratively
// (create) and validateObjectMetaUpdateDeclaratively (update): a custom
// resource's name must be a DNS-1123 subdomain.
func (ver *version) validateObjectMeta(ctx context.Context, op operation.Type, obj, old *unstructured.Unstructured) field.ErrorList {
	metadata, errs := objectMeta(obj)
	if len(errs) > 0 {
		return errs
	}
	nameFn := genericvalidation.NameIsDNSSubdomain
	var oldMetadata *metav1.ObjectMeta
	if op == operation.Update {
		nameFn = nil
		if oldMetadata, errs = objectMeta(old); len(errs) > 0 {
			return errs
		}
	}
	return genericvalidation.ValidateObjectMetaDeclaratively(ctx, op, metadata, oldMetadata, ver.namespaced, nameFn, field.NewPath("metadata"),
		utilfeature.DefaultFeatureGate.Enabled(features.DeclarativeValidationBeta))
}

// validateCEL runs the x-kubernetes-validations rules unless errs already
// holds a blocking error, as the custom resource strategies do.
func (ver *version) validateCEL(ctx context.Context, errs field.ErrorList, obj, old map[string]interface{}, opts ...cel.Option) field.ErrorList {
	if !ver.rootRules && len(ver.ruleRoots) == 0 {
		return nil
	}
	if blocking := blockingErr(errs); blocking != nil {
		return field.ErrorList{blocking}
	}
	var oldObj interface{}
	if old != nil {
		if ver.rulesUnchanged(obj, old) {
			return nil
		}
		oldObj = old
	}
	validator := ver.cel()
	if validator == nil {
		return nil
	}
	celErrs, _ := validator.Validate(ctx, nil, ver.structural, obj, oldObj, celconfig.RuntimeCELCostBudget, opts...)
	return celErrs
}

// rulesUnchanged reports whether an update leaves every value that a CEL
// rule applies to as it was. Updates validate with ratcheting, under which
// the API server skips the rules of unchanged values, so none could fail:
// a status update (whose spec is the stored one) then never compiles the
// rules, which costs a short-lived CLI process tens of milliseconds.
func (ver *version) rulesUnchanged(obj, old map[string]interface{}) bool {
	if ver.rootRules {
		return false
	}
	for _, name := range ver.ruleRoots {
		if !equality.Semantic.DeepEqual(obj[name], old[name]) {
			return false
		}
	}
	return true
}

// embedsResources tells whether s or a node below it is an
// x-kubernetes-embedded-resource.
func embedsResources(s *structuralschema.Structural) bool {
	return anyNode(s, func(n *structuralschema.Structural) bool { return n.XEmbeddedResource })
}

// hasNull tells whether a JSON value holds a null at any depth.
func hasNull(x interface{}) bool {
	switch x := x.(type) {
	case nil:
		return true
	case map[string]interface{}:
		for _, v := range x {
			if hasNull(v) {
				return true
			}
		}
	case []interface{}:
		for _, v := range x {
			if hasNull(v) {
				return true
			}
		}
	}
	return false
}

// hasRules reports whether s or a schema below it holds CEL rules.
func hasRules(s *structuralschema.Structural) bool {
	return anyNode(s, func(n *structuralschema.Structural) bool { return len(n.XValidations) > 0 })
}

// anyNode tells whether has holds for s or a node below it: a property,
// the items, or additionalProperties, at any depth.
func anyNode(s *structuralschema.Structural, has func(*structuralschema.Structural) bool) bool {
	if s == nil {
		return false
	}
	if has(s) {
		return true
	}
	for _, p := range s.Properties {
		if anyNode(&p, has) {
			return true
		}
	}
	if anyNode(s.Items, has) {
		return true
	}
	return s.AdditionalProperties != nil && anyNode(s.AdditionalProperties.Structural, has)
}

// blockingErr is the strategy's hasBlockingErr: OpenAPI type, maxLength,
// maxItems, maxProperties, required and enum violations stop CEL, whose
// cost estimates rely on them.
func blockingErr(errs field.ErrorList) *field.Error {
	for _, err := range errs {
		switch err.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation")
		}
	}
	return nil
}

// objectMeta is the validator's getObjectMeta.
func objectMeta(obj *unstructured.Unstructured) (*metav1.ObjectMeta, field.ErrorList) {
	if obj == nil || obj.UnstructuredContent() == nil {
		return &metav1.ObjectMeta{}, nil
	}
	raw := obj.UnstructuredContent()["metadata"]
	if raw == nil {
		return &metav1.ObjectMeta{}, nil
	}
	m, ok := raw.(map[string]interface{})
	if !ok {
		return nil, field.ErrorList{field.Invalid(field.NewPath("metadata"), raw, fmt.Sprintf("expected map[string]interface{}, got %T", raw))}
	}
	meta := &metav1.ObjectMeta{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, meta); err != nil {
		return nil, field.ErrorList{field.Invalid(field.NewPath("metadata"), raw, err.Error())}
	}
	return meta, nil
}

// validatePathSegment is the name check rest.BeforeCreate and BeforeUpdate
// apply to every resource.
func validatePathSegment(name string, prefix bool) []string {
	if prefix {
		return content.IsPathSegmentPrefix(name)
	}
	return content.IsPathSegmentName(name)
}
