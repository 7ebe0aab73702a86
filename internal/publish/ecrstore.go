package publish

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecr"
	ecrtypes "github.com/aws/aws-sdk-go-v2/service/ecr/types"

	"github.com/cdkbot/cdkbot/internal/awsconfig"
	"github.com/cdkbot/cdkbot/internal/publishplan"
)

// ImageStore is what publishing needs from an ECR destination.
type ImageStore interface {
	// Exists reports whether repository already holds tag.
	Exists(ctx context.Context, repository, tag string) (bool, error)
	// URI is the repository's address to tag and push to.
	URI(ctx context.Context, repository string) (string, error)
	// Credentials for `docker login` to the registry (host, user, password).
	Credentials(ctx context.Context) (registry, user, password string, err error)
	// CreateRepository creates repository unless it exists.
	CreateRepository(ctx context.Context, repository string) error
}

// ImageStores opens the store of a destination, acting as its publishing role.
type ImageStores func(ctx context.Context, d publishplan.Destination) (ImageStore, error)

// ECRStore is an ImageStore on one ECR client (one role, one region).
type ECRStore struct {
	client *ecr.Client
}

// NewECRStore wraps a configuration already acting as the image publishing role.
func NewECRStore(cfg aws.Config) *ECRStore { return &ECRStore{client: ecr.NewFromConfig(cfg)} }

// Exists implements ImageStore with DescribeImages by tag.
func (s *ECRStore) Exists(ctx context.Context, repository, tag string) (bool, error) {
	_, err := s.client.DescribeImages(ctx, &ecr.DescribeImagesInput{RepositoryName: &repository,
		ImageIds: []ecrtypes.ImageIdentifier{{ImageTag: &tag}}})
	var nf *ecrtypes.ImageNotFoundException
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &nf):
		return false, nil
	case isCode(err, "RepositoryNotFoundException"):
		return false, errors.New("repository " + repository +
			" does not exist: is the environment bootstrapped (`cdk bootstrap`)?")
	}
	return false, errors.New("check " + repository + ":" + tag + ": " + awsconfig.Explain(err))
}

// URI implements ImageStore.
func (s *ECRStore) URI(ctx context.Context, repository string) (string, error) {
	out, err := s.client.DescribeRepositories(ctx, &ecr.DescribeRepositoriesInput{RepositoryNames: []string{repository}})
	if err != nil {
		return "", errors.New("find repository " + repository + ": " + awsconfig.Explain(err))
	}
	if len(out.Repositories) == 0 {
		return "", errors.New("repository " + repository + " not found")
	}
	return aws.ToString(out.Repositories[0].RepositoryUri), nil
}

// Credentials implements ImageStore with an ECR authorization token.
func (s *ECRStore) Credentials(ctx context.Context) (string, string, string, error) {
	out, err := s.client.GetAuthorizationToken(ctx, &ecr.GetAuthorizationTokenInput{})
	if err != nil {
		return "", "", "", errors.New("get an ECR authorization token: " + awsconfig.Explain(err))
	}
	if len(out.AuthorizationData) == 0 {
		return "", "", "", errors.New("ECR returned no authorization data")
	}
	d := out.AuthorizationData[0]
	raw, err := base64.StdEncoding.DecodeString(aws.ToString(d.AuthorizationToken))
	if err != nil {
		return "", "", "", errors.New("ECR authorization token is not base64")
	}
	user, password, ok := strings.Cut(string(raw), ":")
	if !ok {
		return "", "", "", errors.New("ECR authorization token is not user:password")
	}
	registry := strings.TrimPrefix(strings.TrimPrefix(aws.ToString(d.ProxyEndpoint), "https://"), "http://")
	return registry, user, password, nil
}

// CreateRepository implements ImageStore, with image scanning on push as the CDK toolkit did
// for legacy repositories.
func (s *ECRStore) CreateRepository(ctx context.Context, repository string) error {
	_, err := s.client.CreateRepository(ctx, &ecr.CreateRepositoryInput{RepositoryName: &repository,
		ImageScanningConfiguration: &ecrtypes.ImageScanningConfiguration{ScanOnPush: true}})
	var exists *ecrtypes.RepositoryAlreadyExistsException
	if err == nil || errors.As(err, &exists) {
		return nil
	}
	return errors.New("create repository " + repository + ": " + awsconfig.Explain(err))
}

// ECRStores opens one ECRStore per role and region.
func ECRStores(sessions *awsconfig.Sessions) ImageStores {
	open := perRole(sessions, NewECRStore)
	return func(ctx context.Context, d publishplan.Destination) (ImageStore, error) {
		st, err := open(ctx, d)
		if err != nil {
			return nil, err // not a typed nil inside the interface
		}
		return st, nil
	}
}
